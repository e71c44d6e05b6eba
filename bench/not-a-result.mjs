/**
 * A figure measured with failures is no result (ADR 0124): says so, and why, beside it, and makes the
 * bench exit non-zero, so that `npm run bench` does too. `indent` lines it up with the figure's lines.
 */
export function notAResult(reason, indent = '') {
  process.exitCode = 1;
  console.log(`${indent}INVALID, not a result: ${reason}`);
}
