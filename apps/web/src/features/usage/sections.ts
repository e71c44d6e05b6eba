/**
 * The dashboard's sections, in the page's order: each is a link in the bar and an id to link to
 * (`/usage#errors`). A panel names its section in its placement (panel-props.ts); the page lists them here
 * once.
 */
export const SECTIONS = [
  // The headline figures and the large chart say what they are: the heading is for assistive technology.
  { id: 'overview', label: 'Overview', heading: 'Overview', headingHidden: true },
  // A section without a heading of its own is its panel: the panel's title is the section's heading.
  { id: 'experience', label: 'Experience', heading: null },
  { id: 'behaviour', label: 'Behaviour', heading: 'Behaviour' },
  {
    id: 'sign-in',
    label: 'Sign-in',
    heading: 'Sign-in',
    intro: 'Whether signing in works: the journey, its failures, renewals, and the tokens the API refused.',
  },
  {
    id: 'sources',
    label: 'Sources',
    heading: 'Sources',
    intro: 'Visitors by where they came from and what they use; choose one to see only them.',
  },
  // Errors and Calls side by side where there is room (two half-width sections in a row share it).
  { id: 'errors', label: 'Errors', heading: null, half: true },
  { id: 'calls', label: 'Calls', heading: null, half: true },
  { id: 'sessions', label: 'Sessions', heading: null },
  { id: 'annotations', label: 'Annotations', heading: null },
] as const satisfies readonly Section[];

export type SectionId = (typeof SECTIONS)[number]['id'];

export interface Section {
  id: string;
  /** The link's text in the section bar. */
  label: string;
  /** The section's own heading (level 2), its panels' at level 3; null when its one panel's title is it. */
  heading: string | null;
  /** A heading for assistive technology only. */
  headingHidden?: boolean;
  /** A line under the heading, saying what the section shows. */
  intro?: string;
  /** Half the width where there is room, beside the next half-width section. */
  half?: boolean;
}
