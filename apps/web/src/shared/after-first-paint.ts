/**
 * Runs `task` once the page has shown its first content (the browser's `first-contentful-paint`), so
 * lazy chunks started from here never compete with what that paint needs. A hidden tab paints
 * nothing, so there it runs at once; a browser without paint timing gets a short timer instead.
 */
export function afterFirstPaint(task: () => void, fallbackMs = 100): void {
  const run = once(task);
  if (typeof document !== 'undefined' && document.visibilityState === 'hidden') {
    setTimeout(run, 0);
    return;
  }
  const supported =
    typeof PerformanceObserver !== 'undefined' && PerformanceObserver.supportedEntryTypes?.includes('paint');
  if (!supported) {
    setTimeout(run, fallbackMs);
    return;
  }
  const observer = new PerformanceObserver((list) => {
    if (list.getEntriesByName('first-contentful-paint').length === 0) return;
    observer.disconnect();
    setTimeout(run, 0);
  });
  observer.observe({ type: 'paint', buffered: true });
}

/**
 * Runs `task` after the next frame has been painted (the task after the next animation frame). A
 * hidden tab paints no frames, so a timer runs it there instead.
 */
export function afterNextFrame(task: () => void, hiddenTabDelayMs = 100): void {
  const run = once(task);
  if (typeof requestAnimationFrame === 'function') requestAnimationFrame(() => setTimeout(run, 0));
  setTimeout(run, hiddenTabDelayMs);
}

/**
 * Runs `task` once the page's address has changed from what it is now (replaced, pushed or left by back
 * and forward), or after `timeoutMs` whatever happens. The sign-in callback replaces its address once its
 * code is redeemed, so work started from here waits for the code exchange instead of competing with it.
 * pushState and replaceState are seen through the events wouter's router dispatches for them.
 */
export function afterAddressChange(task: () => void, timeoutMs = 10_000): void {
  const events = ['popstate', 'pushState', 'replaceState'] as const;
  const address = window.location.href;
  const run = once(() => {
    clearTimeout(timer);
    for (const event of events) window.removeEventListener(event, check);
    setTimeout(task, 0);
  });
  const check = () => {
    if (window.location.href !== address) run();
  };
  const timer = setTimeout(run, timeoutMs);
  for (const event of events) window.addEventListener(event, check);
}

/** The task, callable any number of times, run the first time only (whichever trigger comes first). */
export function once(task: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    task();
  };
}
