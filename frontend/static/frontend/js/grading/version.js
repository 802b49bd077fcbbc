// The grading page of one ground-truth version: its calibration anchors and the
// leaderboard for the chosen scorer.
//
//   await mountVersionGrading(root, { versionId, scorerId, scorers });   // root: #grading-version
//
// window.frameledger.leaderboard is the leaderboard (reload(), sortBy(column)); the root's
// data-state is "ready" once both are drawn.

import { mountCalibration } from "./calibration.js";
import { mountLeaderboard } from "./leaderboard.js";

export async function mountVersionGrading(root, config) {
  // No inline handlers under the Content-Security-Policy: the scorer choice submits from here.
  document.getElementById("scorer-choice").addEventListener("change", (event) => event.target.form.submit());
  window.frameledger = window.frameledger || {};
  window.frameledger.leaderboard = mountLeaderboard(document.getElementById("leaderboard"), config);
  await Promise.all([
    mountCalibration(document.getElementById("calibration"), config),
    window.frameledger.leaderboard.reload(),
  ]);
  root.dataset.state = "ready";
}
