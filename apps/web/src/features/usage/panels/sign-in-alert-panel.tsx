import { useEndpoint } from '../../../auth/api-client';
import type { PanelPlacement, PanelProps } from '../panel-props';
import { SignInAlert } from '../sign-in-alert';

export const panel = { section: 'overview', order: 5 } satisfies PanelPlacement;

/** The overview's line when signing in is failing far more than usual; nothing otherwise. */
export default function SignInAlertPanel({ query, every }: PanelProps) {
  const answer = useEndpoint('/usage/sign-in', { query }, every);
  return answer.status === 'ready' ? <SignInAlert alert={answer.data.alert} /> : null;
}
