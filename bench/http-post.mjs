import http from 'node:http';

/** POSTs a JSON body to `url` over `agent`; resolves with the status and the answer's text. */
export function jsonPoster(url, agent) {
  return (body, headers = {}) =>
    new Promise((resolve, reject) => {
      const req = http.request(
        url,
        { method: 'POST', agent, headers: { 'Content-Type': 'application/json', ...headers } },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode, text }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
}
