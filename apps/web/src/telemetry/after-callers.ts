import { onPageHidden } from './page-hidden';

/** Work queued to run after the code waiting for an answer (see afterCallers). */
export interface AfterCallers {
  /** Queues `task`: it runs in a later task, in order with the others. */
  later: (task: () => void) => void;
  /** Runs every queued task now (before the SDK they report to goes, say). */
  runAll: () => void;
}

/**
 * Work that must not stand between an answer and the code waiting for it (reporting a call): run in a
 * later task, in order, and at once when the page is hidden or left, ahead of the SDK's own listeners
 * (page-hidden.ts), so that what it reports is handed over with the rest.
 */
export function afterCallers(target: Window = window): AfterCallers {
  let tasks: (() => void)[] = [];
  let scheduled = false;
  const runAll = () => {
    scheduled = false;
    const due = tasks;
    tasks = [];
    for (const task of due) task();
  };
  onPageHidden(target, runAll);
  return {
    later: (task) => {
      tasks.push(task);
      if (scheduled) return;
      scheduled = true;
      target.setTimeout(runAll, 0);
    },
    runAll,
  };
}
