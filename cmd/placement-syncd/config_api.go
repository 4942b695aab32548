package main

import (
	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/release"
)

// defaultMaxMicroversion offers every microversion Placement 8.0.0 has.
var defaultMaxMicroversion = microversion.Max.String()

// checkMaxMicroversion validates api.max_microversion.
func checkMaxMicroversion(v string, bad func(key, format string, args ...any)) {
	mv, err := microversion.Parse(v)
	if err != nil || !mv.Supported() {
		bad("api.max_microversion", "invalid microversion %q (from %s to %s)", v, microversion.Min, microversion.Max)
	}
}

// maxMicroversion is the validated api.max_microversion.
func maxMicroversion(c APIConfig) microversion.Version {
	mv, _ := microversion.Parse(c.MaxMicroversion)
	return mv
}

// apiRelease is the validated api.release.
func apiRelease(c APIConfig) release.Release {
	r, _ := release.Parse(c.Release)
	return r
}
