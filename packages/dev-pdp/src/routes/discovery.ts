/**
 * The documents a client fetches before it decides: the JWKS (`GET /.well-known/jwks.json`) and the
 * AuthZEN 1.0 configuration (`GET /.well-known/authzen-configuration`), both cacheable for 60 s.
 * @packageDocumentation
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { configurationDocument } from '../authzen.js';
import { JSON_TYPE, jsonBody } from '../http.js';
import type { Route } from './context.js';

/** The JWKS path. @internal */
export const JWKS_PATH = '/.well-known/jwks.json';

/** Answers `value` 200 with `cache-control: cache` (no body for HEAD). */
function getJson(req: IncomingMessage, res: ServerResponse, requestId: string, value: unknown, cache: string): void {
  const body = jsonBody(value);
  res.writeHead(200, {
    'content-type': JSON_TYPE,
    'content-length': String(body.length),
    'cache-control': cache,
    'x-request-id': requestId,
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}

/** `GET /.well-known/jwks.json`: the public keys of permits and evidence. @internal */
export const jwks: Route = async (ctx, req, res, ids) =>
  getJson(req, res, ids.reply, ctx.config.key.jwks, 'public, max-age=60');

/** `GET /.well-known/authzen-configuration`: the AuthZEN discovery document. @internal */
export const configuration: Route = async (ctx, req, res, ids) =>
  getJson(req, res, ids.reply, configurationDocument(ctx.config.issuer()), 'public, max-age=60');
