// Package testenv lets tests find the real components they run against
// (Node.js and npm servers installed under .deps/, PostgreSQL, Chromium) and
// decides what happens when one is missing: on a developer machine the test
// is skipped with the command that installs it; under CI=true it fails, so
// a CI run never passes by skipping.
package testenv
