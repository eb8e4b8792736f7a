package resourcemetrics

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/metrics/pkg/apis/metrics"
)

// tableConvertor renders PodMetrics and NodeMetrics (and their lists) as tables with the
// columns of `kubectl top`: name, cpu, memory, and the window.
type tableConvertor struct{}

var _ rest.TableConvertor = tableConvertor{}

// tableColumns returns the columns of every table.
func tableColumns() []metav1.TableColumnDefinition {
	return []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Description: "Name of the pod or node."},
		{Name: "CPU", Type: "string", Format: "quantity", Description: "CPU usage, in cores (summed over a pod's containers)."},
		{Name: "Memory", Type: "string", Format: "quantity", Description: "Memory usage, in bytes (summed over a pod's containers)."},
		{Name: "Window", Type: "string", Format: "duration", Description: "The window the usage was measured over."},
	}
}

// ConvertToTable implements rest.TableConvertor.
func (tableConvertor) ConvertToTable(_ context.Context, obj runtime.Object, _ runtime.Object) (*metav1.Table, error) {
	table := &metav1.Table{ColumnDefinitions: tableColumns()}
	switch t := obj.(type) {
	case *metrics.PodMetrics:
		table.Rows = append(table.Rows, usageRow(t, t.Name, podUsage(t), t.Window))
	case *metrics.PodMetricsList:
		table.ResourceVersion, table.Continue = t.ResourceVersion, t.Continue
		for i := range t.Items {
			pm := &t.Items[i]
			table.Rows = append(table.Rows, usageRow(pm, pm.Name, podUsage(pm), pm.Window))
		}
	case *metrics.NodeMetrics:
		table.Rows = append(table.Rows, usageRow(t, t.Name, t.Usage, t.Window))
	case *metrics.NodeMetricsList:
		table.ResourceVersion, table.Continue = t.ResourceVersion, t.Continue
		for i := range t.Items {
			nm := &t.Items[i]
			table.Rows = append(table.Rows, usageRow(nm, nm.Name, nm.Usage, nm.Window))
		}
	default:
		return nil, fmt.Errorf("convert %T to a table: unsupported type", obj)
	}
	return table, nil
}

// usageRow is one table row; a resource without samples shows as "<unknown>".
func usageRow(obj runtime.Object, name string, usage corev1.ResourceList, window metav1.Duration) metav1.TableRow {
	cell := func(r corev1.ResourceName) any {
		q, ok := usage[r]
		if !ok {
			return "<unknown>"
		}
		return q.String()
	}
	return metav1.TableRow{
		Cells:  []any{name, cell(corev1.ResourceCPU), cell(corev1.ResourceMemory), windowOf(window)},
		Object: runtime.RawExtension{Object: obj},
	}
}
