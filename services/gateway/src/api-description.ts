import { createHash } from 'node:crypto';
import fs from 'node:fs';
import type { Response } from 'express';
import { buildOpenApiDocument } from '@worklane/api-contract';
import type { PublicApiRoute } from '@worklane/http';

/**
 * What the gateway serves about the API itself, without a token: the OpenAPI document, built once
 * at start from packages/api-contract (the schemas the services validate with), and the reference
 * page rendered from it at build time (Redoc with its scripts inlined: it loads nothing from
 * elsewhere, and its Content-Security-Policy lets it connect nowhere but here).
 */
export interface ApiDescription {
  /** The OpenAPI document as sent. */
  json: string;
  /**
   * The reference page, or undefined when it was not built (the route then answers 404). It is
   * sent from its file on each request: its 2.7 MB would take twice that on the heap as a string,
   * for a page a browser asks for once per visit (and caches for five minutes).
   */
  reference?: ReferencePage | undefined;
}

export interface ReferencePage {
  file: string;
  /** The page's Content-Security-Policy, from its inline scripts' hashes. */
  policy: string;
}

/** The document of this release, and the reference page when the contract's build wrote it. */
export function loadApiDescription(version?: string): ApiDescription {
  let reference: ReferencePage | undefined;
  try {
    const file = require.resolve('@worklane/api-contract/dist/reference.html');
    reference = { file, policy: referencePolicy(fs.readFileSync(file, 'utf8')) };
  } catch {
    reference = undefined;
  }
  return { json: JSON.stringify(buildOpenApiDocument(version ? { version } : {})), reference };
}

/** `'sha256-...'` of each inline script of a page, for its Content-Security-Policy. */
export function inlineScriptHashes(html: string): string[] {
  return [...html.matchAll(/<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/gi)].map(
    (match) =>
      `'sha256-${createHash('sha256')
        .update(match[1] ?? '', 'utf8')
        .digest('base64')}'`,
  );
}

/** The page's policy: its own inline scripts and styles, images and fonts inline, requests only to this origin. */
export function referencePolicy(html: string): string {
  return [
    "default-src 'none'",
    `script-src ${inlineScriptHashes(html).join(' ') || "'none'"}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** Answers a public route of the API description. */
export function apiDescriptionHandler(description: ApiDescription) {
  return (route: PublicApiRoute, res: Response): boolean => {
    res.set({ 'Cache-Control': 'public, max-age=300', 'X-Content-Type-Options': 'nosniff' });
    if (route.serves === 'api-description') {
      res.type('application/json').send(description.json);
      return true;
    }
    const { reference } = description;
    if (!reference) return false;
    res.set({ 'Content-Security-Policy': reference.policy, 'Referrer-Policy': 'no-referrer', 'X-Frame-Options': 'DENY' });
    res.type('text/html').sendFile(reference.file, (error?: Error) => {
      // The file went away under a running gateway (it never should): no page, rather than a hang.
      if (error && !res.headersSent) res.status(404).end();
    });
    return true;
  };
}
