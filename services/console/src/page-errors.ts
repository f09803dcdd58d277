import type { ErrorRequestHandler } from 'express';
import { DEFAULT_RETRY_AFTER_SECONDS, HttpError } from '@worklane/http';
import { pageContext, PageError, sendPage } from './context';
import type { ConsoleDeps } from './deps';
import { ServiceUnavailableError } from './errors';
import { errorPage } from './views/pages';

/**
 * Every error as a page a person can read: the page's own status and explanation, a request that
 * could not be understood, a service that is not answering (503, Retry-After), anything else 500.
 */
export function pageErrors(deps: ConsoleDeps): ErrorRequestHandler {
  return (error, req, res, _next) => {
    if (res.headersSent) return void res.end();
    const context = pageContext(req, deps.assets);
    if (error instanceof PageError) {
      res.set(error.headers);
      return sendPage(res, error.status, errorPage(context, { status: error.status, title: error.title, message: error.message }));
    }
    if (error instanceof HttpError && error.status < 500) {
      return sendPage(
        res,
        error.status,
        errorPage(context, { status: error.status, title: 'Request not accepted', message: 'The request could not be understood. Reload the page and try again.' }),
      );
    }
    if (error instanceof ServiceUnavailableError) {
      deps.logger.warn({ err: error.reason, service: error.service, url: req.originalUrl }, 'a service the console needs is unavailable');
      res.set('Retry-After', String(deps.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS));
      return sendPage(
        res,
        503,
        errorPage(context, {
          status: 503,
          title: 'Worklane is not answering right now',
          message: `Part of Worklane (the ${error.service} service) did not answer in time. Wait a moment, then reload the page or try again.`,
        }),
      );
    }
    deps.logger.error({ err: error, method: req.method, url: req.originalUrl }, 'console request failed');
    sendPage(
      res,
      500,
      errorPage(context, {
        status: 500,
        title: 'Something went wrong on our side',
        message: 'The page could not be shown. The problem has been logged; please try again in a moment.',
      }),
    );
  };
}
