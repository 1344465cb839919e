/**
 * THE rule that joins a base URL (or the path of one) and a path, for every URL the SDK builds from
 * `pdpUrl` (the decision and AuthZEN endpoints, the discovery document) and the one the README's
 * snippets and examples write (`keys: \`${pdpUrl}/.well-known/jwks.json\`` after trimming `pdpUrl`'s
 * trailing `/`): the base loses its trailing `/`s, the path keeps exactly one leading `/`. So
 * `http://h:1/` and `/.well-known/jwks.json` give `http://h:1/.well-known/jwks.json`, never `//`.
 * @internal
 */

/** `value` without its trailing `/`s (`'http://h:1/'` -> `'http://h:1'`, `'/'` -> `''`). */
export function trimTrailingSlashes(value: string): string {
  let end = value.length;
  while (end > 0 && value.charCodeAt(end - 1) === 0x2f) end--;
  return value.slice(0, end);
}

/**
 * `base` and `path` joined by exactly one `/`.
 * @param base - a URL or a path (`'http://h:1/'`, `'/pdp/'`, `''`)
 * @param path - a path, with or without its leading `/` (`'/.well-known/jwks.json'`)
 */
export function joinUrl(base: string, path: string): string {
  let start = 0;
  while (start < path.length && path.charCodeAt(start) === 0x2f) start++;
  return `${trimTrailingSlashes(base)}/${path.slice(start)}`;
}
