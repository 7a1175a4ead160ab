package main

import (
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Check decodes data strictly (Decode), then checks the objects together
// (Invariants).
func Check(data []byte) ([]Object, error) {
	objs, err := Decode(data)
	if err != nil {
		return nil, err
	}
	return objs, Invariants(objs)
}

// Invariants checks what the API types cannot: what kubectl would accept
// but would not work, or would break the chart's promises.
//   - A Deployment's selector selects its own pod template.
//   - Every Service and PodDisruptionBudget selects the pods of some
//     Deployment, and a Service's named target ports exist in those pods.
//   - Every probe's named port exists in its container.
//   - Every container runs hardened: not as root, read-only root file
//     system, no privilege escalation, every capability dropped.
//   - A container that sets FEED_SHUTDOWN_DELAY or FEED_SHUTDOWN_TIMEOUT
//     (feedd serve) gets a termination grace longer than their sum, or the
//     kubelet would kill requests still finishing.
func Invariants(objs []Object) error {
	var errs []error
	var deployments []*appsv1.Deployment
	for _, o := range objs {
		if d, ok := o.Value.(*appsv1.Deployment); ok {
			deployments = append(deployments, d)
			for _, err := range checkDeployment(d) {
				errs = append(errs, fmt.Errorf("%v: %w", o, err))
			}
		}
	}
	for _, o := range objs {
		var err error
		switch v := o.Value.(type) {
		case *corev1.Service:
			err = checkService(v, deployments)
		case *policyv1.PodDisruptionBudget:
			err = checkPDB(v, deployments)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%v: %w", o, err))
		}
	}
	return errors.Join(errs...)
}

func checkDeployment(d *appsv1.Deployment) []error {
	var errs []error
	if d.Spec.Selector == nil {
		return []error{errors.New("spec.selector is missing")}
	}
	sel, err := deploymentSelector(d)
	if err != nil {
		errs = append(errs, err)
	} else if !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
		errs = append(errs, fmt.Errorf("spec.selector %v does not select the pod template's labels %v", sel, d.Spec.Template.Labels))
	}
	pod := d.Spec.Template.Spec
	for _, c := range pod.Containers {
		errs = append(errs, checkContainer(pod, c)...)
	}
	return errs
}

func checkContainer(pod corev1.PodSpec, c corev1.Container) []error {
	var errs []error
	fail := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("container %s: "+format, append([]any{c.Name}, args...)...))
	}
	for name, p := range map[string]*corev1.Probe{"livenessProbe": c.LivenessProbe, "readinessProbe": c.ReadinessProbe, "startupProbe": c.StartupProbe} {
		if p != nil && p.HTTPGet != nil && p.HTTPGet.Port.Type == intstr.String && !hasPort(c, p.HTTPGet.Port.StrVal) {
			fail("%s names port %q, which the container does not have", name, p.HTTPGet.Port.StrVal)
		}
	}
	if !hardened(pod, c) {
		fail("not hardened: want runAsNonRoot, readOnlyRootFilesystem, allowPrivilegeEscalation false and capabilities drop ALL")
	}
	if err := checkGrace(pod, c); err != nil {
		fail("%v", err)
	}
	return errs
}

func hardened(pod corev1.PodSpec, c corev1.Container) bool {
	sc := c.SecurityContext
	if sc == nil {
		return false
	}
	nonRoot := sc.RunAsNonRoot
	if nonRoot == nil && pod.SecurityContext != nil {
		nonRoot = pod.SecurityContext.RunAsNonRoot
	}
	dropsAll := false
	if sc.Capabilities != nil {
		for _, cap := range sc.Capabilities.Drop {
			dropsAll = dropsAll || cap == "ALL"
		}
	}
	return isTrue(nonRoot) && isTrue(sc.ReadOnlyRootFilesystem) &&
		sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation && dropsAll
}

func isTrue(b *bool) bool { return b != nil && *b }

// checkGrace compares the pod's termination grace with feedd serve's
// shutdown: the readiness delay, then the drain.
func checkGrace(pod corev1.PodSpec, c corev1.Container) error {
	var drain time.Duration
	set := false
	for _, e := range c.Env {
		if e.Name != "FEED_SHUTDOWN_DELAY" && e.Name != "FEED_SHUTDOWN_TIMEOUT" {
			continue
		}
		d, err := time.ParseDuration(e.Value)
		if err != nil {
			return fmt.Errorf("%s=%q is not a duration: %w", e.Name, e.Value, err)
		}
		drain += d
		set = true
	}
	if !set {
		return nil
	}
	grace := 30 * time.Second // Kubernetes's default
	if pod.TerminationGracePeriodSeconds != nil {
		grace = time.Duration(*pod.TerminationGracePeriodSeconds) * time.Second
	}
	if grace <= drain {
		return fmt.Errorf("terminationGracePeriodSeconds (%v) must exceed the shutdown delay plus timeout (%v)", grace, drain)
	}
	return nil
}

func hasPort(c corev1.Container, name string) bool {
	for _, p := range c.Ports {
		if p.Name == name {
			return true
		}
	}
	return false
}

func deploymentSelector(d *appsv1.Deployment) (labels.Selector, error) {
	sel, err := labelSelector(d.Spec.Selector.MatchLabels)
	if err != nil {
		return nil, fmt.Errorf("spec.selector: %w", err)
	}
	return sel, nil
}

func labelSelector(m map[string]string) (labels.Selector, error) {
	if len(m) == 0 {
		return nil, errors.New("selects nothing: no matchLabels")
	}
	return labels.SelectorFromValidatedSet(labels.Set(m)), nil
}

// selected returns the Deployments whose pods match.
func selected(m map[string]string, deployments []*appsv1.Deployment) ([]*appsv1.Deployment, error) {
	sel, err := labelSelector(m)
	if err != nil {
		return nil, err
	}
	var out []*appsv1.Deployment
	for _, d := range deployments {
		if sel.Matches(labels.Set(d.Spec.Template.Labels)) {
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("selector %v selects the pods of no Deployment", sel)
	}
	return out, nil
}

func checkService(s *corev1.Service, deployments []*appsv1.Deployment) error {
	ds, err := selected(s.Spec.Selector, deployments)
	if err != nil {
		return err
	}
	for _, p := range s.Spec.Ports {
		if p.TargetPort.Type != intstr.String {
			continue
		}
		for _, d := range ds {
			if !podHasPort(d.Spec.Template.Spec, p.TargetPort.StrVal) {
				return fmt.Errorf("port %s: targetPort %q is not a port of Deployment %s's pods", p.Name, p.TargetPort.StrVal, d.Name)
			}
		}
	}
	return nil
}

func podHasPort(pod corev1.PodSpec, name string) bool {
	for _, c := range pod.Containers {
		if hasPort(c, name) {
			return true
		}
	}
	return false
}

func checkPDB(p *policyv1.PodDisruptionBudget, deployments []*appsv1.Deployment) error {
	if p.Spec.Selector == nil {
		return errors.New("spec.selector is missing")
	}
	_, err := selected(p.Spec.Selector.MatchLabels, deployments)
	return err
}
