package main

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// Object is one decoded manifest: its type and name, and the typed value
// (a pointer to a k8s.io/api or monitoring type).
type Object struct {
	APIVersion, Kind, Name string
	Doc                    int // its place in the input, from 1
	Value                  any
}

func (o Object) String() string {
	return fmt.Sprintf("document %d (%s %s/%s)", o.Doc, o.APIVersion, o.Kind, o.Name)
}

// kinds maps "apiVersion kind" to a new typed object of that kind: the
// kinds a chart of this sort renders. Any other is refused, so a typo in
// apiVersion or kind cannot pass unchecked.
var kinds = map[string]func() any{
	"v1 ConfigMap":                            func() any { return &corev1.ConfigMap{} },
	"v1 Secret":                               func() any { return &corev1.Secret{} },
	"v1 Service":                              func() any { return &corev1.Service{} },
	"v1 ServiceAccount":                       func() any { return &corev1.ServiceAccount{} },
	"apps/v1 Deployment":                      func() any { return &appsv1.Deployment{} },
	"apps/v1 StatefulSet":                     func() any { return &appsv1.StatefulSet{} },
	"batch/v1 Job":                            func() any { return &batchv1.Job{} },
	"policy/v1 PodDisruptionBudget":           func() any { return &policyv1.PodDisruptionBudget{} },
	"autoscaling/v2 HorizontalPodAutoscaler":  func() any { return &autoscalingv2.HorizontalPodAutoscaler{} },
	"networking.k8s.io/v1 Ingress":            func() any { return &networkingv1.Ingress{} },
	"networking.k8s.io/v1 NetworkPolicy":      func() any { return &networkingv1.NetworkPolicy{} },
	"monitoring.coreos.com/v1 ServiceMonitor": func() any { return &monitoringv1.ServiceMonitor{} },
	"monitoring.coreos.com/v1 PodMonitor":     func() any { return &monitoringv1.PodMonitor{} },
	"monitoring.coreos.com/v1 PrometheusRule": func() any { return &monitoringv1.PrometheusRule{} },
}

// separator is a YAML document separator line, as helm template writes
// them ("---", alone on its line).
var separator = regexp.MustCompile(`(?m)^---[ \t]*$`)

// Decode splits data into YAML documents and decodes each, strictly, into
// the typed object of its kind. Empty documents (comments only) are
// skipped. Every document's problem is reported, joined.
func Decode(data []byte) ([]Object, error) {
	var objs []Object
	var errs []error
	for i, doc := range separator.Split(string(data), -1) {
		o, ok, err := decodeDoc(i+1, doc)
		switch {
		case err != nil:
			errs = append(errs, err)
		case ok:
			objs = append(objs, o)
		}
	}
	if len(objs) == 0 && len(errs) == 0 {
		errs = append(errs, errors.New("no manifest in the input: give helm template's output"))
	}
	return objs, errors.Join(errs...)
}

// decodeDoc decodes document n; ok is false for an empty one.
func decodeDoc(n int, doc string) (o Object, ok bool, err error) {
	if strings.TrimSpace(stripComments(doc)) == "" {
		return Object{}, false, nil
	}
	var tm struct {
		metav1.TypeMeta `json:",inline"`
		Metadata        struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
		return Object{}, false, fmt.Errorf("document %d: not a YAML object: %w", n, err)
	}
	o = Object{APIVersion: tm.APIVersion, Kind: tm.Kind, Name: tm.Metadata.Name, Doc: n}
	newObj, known := kinds[tm.APIVersion+" "+tm.Kind]
	if !known {
		return Object{}, false, fmt.Errorf("%v: unknown apiVersion and kind: add it to chartcheck's kinds, with its Go type, if it is meant", o)
	}
	if o.Name == "" {
		return Object{}, false, fmt.Errorf("%v: metadata.name is empty", o)
	}
	o.Value = newObj()
	if err := unmarshalStrict([]byte(doc), o.Value); err != nil {
		return Object{}, false, fmt.Errorf("%v: %w", o, err)
	}
	return o, true, nil
}

// unmarshalStrict decodes a YAML document into v as the API server
// decodes a request: field names matched case-sensitively (encoding/json
// alone would take readinessprobe for readinessProbe), and a field v's
// type lacks or a duplicated key refused, every one of them named with
// its path (spec.template.spec.containers[0].readinessprobe).
func unmarshalStrict(doc []byte, v any) error {
	j, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return fmt.Errorf("YAML: %w", err)
	}
	strict, err := kjson.UnmarshalStrict(j, v, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	return errors.Join(strict...)
}

// stripComments drops the lines that are YAML comments alone (helm
// template starts every document with "# Source: ...").
func stripComments(doc string) string {
	var b strings.Builder
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}
