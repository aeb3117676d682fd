// The endpoint setting → the server's base URL. People paste OpenAI-style base URLs
// (`http://host:8000/v1`) as often as bare ones (`http://host:8080`); both name the same
// server, and every path Leapfrog asks for (/v1/models, /infill, /api/version) hangs off the
// bare one.

/** A setting that cannot name a server; the message says what is wrong with it. */
export class EndpointUrlError extends Error {}

export function normalizeEndpointUrl(raw: string): string {
  const text = raw.trim();
  let url: URL;
  try {
    // `gpu-box:8000` parses as a URL of scheme `gpu-box:`; a server's URL has `://`.
    if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) throw new Error('no scheme');
    url = new URL(text);
  } catch {
    throw new EndpointUrlError(
      `endpoint ${JSON.stringify(raw)} is not a URL (expected e.g. http://host:8080)`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new EndpointUrlError(`endpoint ${text}: only http:// and https:// URLs are supported`);
  }
  if (url.username || url.password) {
    // fetch refuses such URLs, and a key in a settings file is what SecretStorage avoids.
    throw new EndpointUrlError(
      `endpoint ${url.host}: put the key in the endpoint API key, not in the URL`,
    );
  }
  const path = url.pathname.replace(/\/+$/, '').replace(/\/v1$/, '');
  return `${url.protocol}//${url.host}${path}`;
}
