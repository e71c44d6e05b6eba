/** The window onPageHidden listens on, its document read for visibility. */
export type PageTarget = Pick<Window, 'addEventListener'> & { document: Pick<Document, 'visibilityState'> };

/**
 * Calls `hidden` when the page is hidden or being left, and `shown` when it is back. The listeners
 * capture on the window, so they run before the SDK's own, on the window and on the document (which
 * hands the SDK what it holds then).
 */
export function onPageHidden(target: PageTarget, hidden: () => void, shown: () => void = () => {}): void {
  target.addEventListener('pagehide', hidden, { capture: true });
  target.addEventListener('pageshow', shown, { capture: true });
  target.addEventListener(
    'visibilitychange',
    () => (target.document.visibilityState === 'hidden' ? hidden() : shown()),
    { capture: true },
  );
}
