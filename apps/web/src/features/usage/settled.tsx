import { createContext, useCallback, useContext, useEffect, useRef, useState } from 'react';

/** How a panel tells the page whether it still waits for its first answer. */
type Report = (panel: object, loading: boolean) => void;
const Reports = createContext<Report | null>(null);
export const SettledReports = Reports.Provider;

/**
 * Tells the page whether this panel is still loading (Panel calls it, so every panel does, and none has
 * to remember): the page waits for all of them before it scrolls to the section in the address.
 * Outside the dashboard (a panel's own test, the session page) nobody listens.
 */
export function useReportLoading(loading: boolean) {
  const report = useContext(Reports);
  const [me] = useState(() => ({}));
  useEffect(() => report?.(me, loading), [report, me, loading]);
  useEffect(() => () => report?.(me, false), [report, me]);
}

/**
 * A link to a section (`/usage#errors`) scrolls to it once every panel has its content: the browser's own
 * scroll on load happens before this chunk has rendered, and loading content moves it. Once only: later
 * loads (a new period, a refresh) leave the scroll to the admin. The panels report through the returned
 * function (SettledReports); their effects run before the page's, so the first check already knows them.
 */
export function useScrollToSectionOnLoad(): Report {
  const loading = useRef(new Set<object>());
  const done = useRef(false);
  const [changes, setChanges] = useState(0);
  const report = useCallback<Report>((panel, isLoading) => {
    const was = loading.current.has(panel);
    if (isLoading) loading.current.add(panel);
    else loading.current.delete(panel);
    if (was !== isLoading) setChanges((n) => n + 1);
  }, []);
  useEffect(() => {
    if (done.current || loading.current.size > 0) return;
    done.current = true;
    const id = window.location.hash.slice(1);
    if (id) document.getElementById(id)?.scrollIntoView();
  }, [changes]);
  return report;
}
