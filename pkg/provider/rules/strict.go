package rules

import (
	"reflect"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// unknownFields names the path of every field in data that Config does not have, so that a
// strict-decoding failure points at the offending field (encoding/json's message does not).
func unknownFields(data []byte) field.ErrorList {
	var doc any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil
	}
	return walkUnknown(doc, reflect.TypeFor[Config](), nil)
}

func walkUnknown(v any, t reflect.Type, path *field.Path) field.ErrorList {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var errs field.ErrorList
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			f, ok := fieldByJSONName(t, k)
			if !ok {
				errs = append(errs, field.Forbidden(childPath(path, k), "unknown field"))
				continue
			}
			errs = append(errs, walkUnknown(obj[k], f.Type, childPath(path, k))...)
		}
	case reflect.Slice:
		items, _ := v.([]any)
		for i, item := range items {
			errs = append(errs, walkUnknown(item, t.Elem(), path.Index(i))...)
		}
	case reflect.Map:
		obj, _ := v.(map[string]any)
		for k, item := range obj {
			errs = append(errs, walkUnknown(item, t.Elem(), path.Key(k))...)
		}
	}
	return errs
}

func childPath(path *field.Path, name string) *field.Path {
	if path == nil {
		return field.NewPath(name)
	}
	return path.Child(name)
}

func fieldByJSONName(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}
