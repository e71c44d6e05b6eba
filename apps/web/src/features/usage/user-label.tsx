/**
 * Who a session belongs to, marked by what the server can vouch for: a signed-in user whose id it
 * issued ("verified"), an authenticated id it did not issue (forged, or from before a key was
 * dropped: "unverified"), or an anonymous browser.
 */
export function UserLabel(props: { user: string | null; authenticated: boolean; verified: boolean }) {
  if (!props.authenticated) return <>{props.user ?? 'anonymous'}</>;
  return (
    <>
      <span className="long-text">{props.user}</span>
      {props.verified ? (
        <span className="badge verified">verified</span>
      ) : (
        <span className="badge" title="An id this server did not issue: possibly forged">
          unverified
        </span>
      )}
    </>
  );
}
