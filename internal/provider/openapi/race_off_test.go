//go:build !race

package openapi

const raceOn = false
