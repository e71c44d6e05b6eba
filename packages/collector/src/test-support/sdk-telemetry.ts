/** What the Node.js SDK tests pass to trackAvailability (both SDKs take the same shape). */
export const availabilityProbe = {
  id: 'run-1',
  name: 'sign-in probe',
  duration: 1500,
  success: false,
  runLocation: 'eu-west',
  message: 'token endpoint timed out',
};
