// Package prediction runs the forecast's part of an autoscaler round: the models fitted on the
// metrics' histories and shared per distinct history (Models), each metric's forecast one lead
// time ahead (Round), and what status.prediction and PredictionActive show of it (Record). It
// builds on the pure forecast package and must not import pkg/autoscaler/controller.
package prediction
