/* global __AUTHORITY__, __SCOPE__ -- defined by the benchmark's build */
/** The client both sign-in peers register as: the same client, scope and userinfo call as Gatehouse. */
export const clientSettings = {
  authority: __AUTHORITY__,
  client_id: 'gatehouse',
  redirect_uri: `${location.origin}/callback`,
  post_logout_redirect_uri: `${location.origin}/`,
  scope: __SCOPE__,
  loadUserInfo: true,
};
