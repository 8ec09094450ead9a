//go:build slurm || mariadb || gpu

package main

import "testing"

// withoutSlurm leaves PATH alone where the tests are meant to reach the
// real cluster or GPU.
func withoutSlurm(t *testing.T) { t.Helper() }
