/**
 * The page's own fetch calls as dependencies, tracked as the token vault's calls are (the facade's
 * `apiCall`): a W3C `traceparent` where the tracker gives one, and the answer's status told once it
 * came. The caller gets the very promise the browser's fetch returned, and what the tracker does with
 * the answer runs after the caller's own code (the facade reports in a later task), so a tracked call
 * costs its caller the header and a clock read. The SDK's own fetch instrumentation reported each call
 * on the way from the answer to its caller: about 0.7 ms of the page's thread a call.
 */

/** What a tracked call gets: the header to send (none: not this origin's), and where its status goes. */
export interface TrackedCall {
  traceparent?: string | undefined;
  done: (status: number) => void;
}

/** `undefined`: this call is not tracked (the SDK is not running, or it is the SDK's own send). */
export type CallTracker = (url: string, method: string) => TrackedCall | undefined;

export function trackedFetch(
  original: typeof fetch,
  track: CallTracker,
  base: () => string = () => window.location.href,
): typeof fetch {
  return function fetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
    let call: TrackedCall | undefined;
    let sent = init;
    try {
      const request = input instanceof Request ? input : undefined;
      const address = input instanceof Request ? input.url : input instanceof URL ? input.href : input;
      const url = new URL(address, base()).href;
      call = track(url, (init?.method ?? request?.method ?? 'GET').toUpperCase());
      if (call?.traceparent !== undefined) {
        // As fetch does: the init's headers, where given, stand for the request's.
        const headers = new Headers(init?.headers ?? request?.headers);
        headers.set('traceparent', call.traceparent);
        sent = { ...init, headers };
      }
    } catch {
      // An address fetch itself will refuse: it goes as it came, and fetch says why.
      call = undefined;
      sent = init;
    }
    const answer = original(input, sent);
    if (call) {
      const { done } = call;
      answer.then(
        (response) => done(response.status),
        () => done(0),
      );
    }
    return answer;
  };
}
