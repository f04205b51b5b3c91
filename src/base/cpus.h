/* cpus: how many CPUs this process may really use, for --threads 0.
 *
 * A container is often given a share of a big node: the CPUs it may run on
 * (the affinity mask, set by `docker run --cpuset-cpus`, taskset, Kubernetes'
 * static CPU manager) and a CPU quota (cgroup v2 `cpu.max`, v1
 * `cpu.cfs_quota_us`: `docker run --cpus`, a Kubernetes limit). Threads past
 * the quota only queue and get throttled; nginx's `worker_processes auto`
 * and Go's runtime read the same two. Start-up path; thread-safe (no state).
 */
#ifndef FOLIO_CPUS_H
#define FOLIO_CPUS_H

/* CPUs the quota in text allows ("max 100000", "150000 100000": a cgroup
 * v2 cpu.max line), rounded up, at most cpus; cpus when text says no limit
 * or is not such a line. Pure. */
unsigned cpus_within_quota(const char *text, unsigned cpus);

/* The smaller of the affinity mask's CPUs and this cgroup's quota; at least 1. */
unsigned cpus_available(void);

#endif
