/**
 * Runs `task` once the browser has painted the page: the frame after the first animation frame.
 * A hidden tab paints no frames, so a timer runs it there instead. Lazy chunks started from here
 * never compete with what the first paint needs.
 */
export function afterFirstPaint(task: () => void, hiddenTabDelayMs = 100): void {
  let done = false;
  const run = () => {
    if (done) return;
    done = true;
    task();
  };
  if (typeof requestAnimationFrame === 'function') requestAnimationFrame(() => setTimeout(run, 0));
  setTimeout(run, hiddenTabDelayMs);
}
