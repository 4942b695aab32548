// Package audit compares Placement's allocations and providers with what
// Nova holds: consumers no instance or migration explains (orphans),
// compute-node providers Nova no longer lists, usage above capacity, and
// consumers without an owner. An Auditor reads Placement through its
// Placement interface and Nova through Nova (novaclient's sources), both
// declared here; it deletes orphans only when asked, when Nova was read
// in full, and within its mass-removal guard.
//
// The reconciler runs it as a job (reconciler/job_audit.go); the audit
// command runs it once.
package audit
