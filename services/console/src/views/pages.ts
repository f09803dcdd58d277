import { html } from '../html';
import { csrfInput, page, type PageContext } from './layout';

/**
 * The confirmation step of a destructive action when the browser did not confirm it already
 * (no JavaScript): the same form again, with `confirmed=yes`.
 */
export function confirmPage(context: PageContext, options: { title: string; question: string; detail: string; action: string; button: string; cancel: string }) {
  return page(context, {
    title: options.title,
    body: html`<section class="card narrow">
      <h1>${options.title}</h1>
      <p>${options.question}</p>
      <p class="warning">${options.detail}</p>
      <form method="post" action="${options.action}" class="button-row">
        ${csrfInput(context.csrfToken)}
        <input type="hidden" name="confirmed" value="yes">
        <button type="submit" class="button danger">${options.button}</button>
        <a class="button" href="${options.cancel}">Cancel</a>
      </form>
    </section>`,
  });
}

export function errorPage(context: PageContext, options: { status: number; title: string; message: string; back?: string }) {
  return page(context, {
    title: options.title,
    body: html`<section class="card narrow error-page">
      <p class="status-code">Error ${options.status}</p>
      <h1>${options.title}</h1>
      <p>${options.message}</p>
      <p><a class="button" href="${options.back ?? '/'}">${options.back ? 'Go back' : 'Go to your team'}</a></p>
    </section>`,
  });
}
