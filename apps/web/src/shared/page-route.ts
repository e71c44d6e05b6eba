import type { Access } from '@gatehouse/api-contract';

/**
 * What a page says of itself, beside its component (`export const route = { … } satisfies PageRoute` in a
 * `*-page.tsx` file under features/): the route table is made from these (pages-plugin.ts, ADR 0091). Written
 * with literals only, as it is read from the file before the page loads.
 */
export interface PageRoute {
  /** Its address, in wouter's syntax (`/usage/sessions/:id`). */
  path: string;
  /** The name its page views carry in the telemetry. */
  name: string;
  /**
   * Who may open it, as the API's endpoints say it (the contract's mayAccess decides, for the guard and
   * the link): signed-out visitors of a signed-in or admin page go through sign-in and come back.
   */
  access: Access;
  /**
   * Its link in the main navigation, links in ascending `order`: shown to whoever may open the page, and
   * to signed-out visitors when signing in would open it to anyone.
   */
  nav?: { label: string; order: number };
  /** Loaded with the app rather than on demand: only for the page the first render shows (`/`). */
  eager?: boolean;
}
