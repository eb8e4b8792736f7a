// Package autoscalertest holds what the autoscaler packages' tests share: the seed 000 example
// PodAutoscaler and the fixtures' clock. Only tests import it.
package autoscalertest
