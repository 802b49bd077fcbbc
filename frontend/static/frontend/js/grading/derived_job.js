// The work a freeze or a publication leaves for after its commit (the agreement report,
// a version's calibration anchors) has a job: queued, running, done or failed with the
// reason (docs/grading.md, "Derived work"). Pure: no DOM, no fetch.

export const RECHECK_MS = 1000;

// True while the job's result is still on its way.
export function isPending(job) {
  return Boolean(job) && (job.status === "queued" || job.status === "running");
}

// One sentence on the job for the page that shows its result ("" when there is no job).
export function derivedJobText(job, what) {
  if (!job) return "";
  if (job.status === "failed") return `${what}: failed (job ${job.id}): ${job.message}`;
  if (isPending(job)) return `${what}: ${job.status}, computed after the commit (job ${job.id}).`;
  return `${what}: ${job.status} (job ${job.id}).`;
}
