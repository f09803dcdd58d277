import { CSRF_FIELD } from '../csrf';
import { html } from '../html';
import { describedBy, field, page, type PageContext, type PageOptions } from './layout';

export type FormErrors = Record<string, string[]>;

interface AuthFormOptions {
  csrfToken: string;
  values?: Record<string, string>;
  errors?: FormErrors;
  notice?: PageOptions['notice'];
}

const preSessionCsrf = (token: string) => html`<input type="hidden" name="${CSRF_FIELD}" value="${token}">`;

export function loginPage(context: PageContext, options: AuthFormOptions & { next?: string; signupEnabled: boolean }) {
  const values = options.values ?? {};
  const errors = options.errors ?? {};
  return page(context, {
    title: 'Sign in',
    notice: options.notice,
    body: html`<section class="card narrow">
      <h1>Sign in to Worklane</h1>
      <form method="post" action="/login" novalidate>
        ${preSessionCsrf(options.csrfToken)}
        ${options.next ? html`<input type="hidden" name="next" value="${options.next}">` : ''}
        ${field({
          id: 'email',
          label: 'Email',
          errors: errors.email,
          control: (ids, invalid) =>
            html`<input id="email" name="email" type="email" autocomplete="username" required autofocus value="${values.email ?? ''}"${describedBy(ids, invalid)}>`,
        })}
        ${field({
          id: 'password',
          label: 'Password',
          errors: errors.password,
          control: (ids, invalid) => html`<input id="password" name="password" type="password" autocomplete="current-password" required${describedBy(ids, invalid)}>`,
        })}
        <button type="submit" class="button primary">Sign in</button>
      </form>
      ${options.signupEnabled ? html`<p class="aside">New to Worklane? <a href="/signup">Create an account</a>.</p>` : ''}
    </section>`,
  });
}

export function signupPage(context: PageContext, options: AuthFormOptions) {
  const values = options.values ?? {};
  const errors = options.errors ?? {};
  return page(context, {
    title: 'Create an account',
    notice: options.notice,
    body: html`<section class="card narrow">
      <h1>Create your Worklane account</h1>
      <form method="post" action="/signup" novalidate>
        ${preSessionCsrf(options.csrfToken)}
        ${field({
          id: 'name',
          label: 'Your name',
          errors: errors.name,
          control: (ids, invalid) => html`<input id="name" name="name" autocomplete="name" required maxlength="255" value="${values.name ?? ''}"${describedBy(ids, invalid)}>`,
        })}
        ${field({
          id: 'email',
          label: 'Email',
          errors: errors.email,
          control: (ids, invalid) => html`<input id="email" name="email" type="email" autocomplete="email" required value="${values.email ?? ''}"${describedBy(ids, invalid)}>`,
        })}
        ${field({
          id: 'password',
          label: 'Password',
          hint: 'At least 8 characters; a longer passphrase is better.',
          errors: errors.password,
          control: (ids, invalid) => html`<input id="password" name="password" type="password" autocomplete="new-password" required minlength="8"${describedBy(ids, invalid)}>`,
        })}
        ${field({
          id: 'team',
          label: 'Team name',
          hint: 'The team owns your organizations, projects, API tokens and webhooks.',
          errors: errors.team,
          control: (ids, invalid) => html`<input id="team" name="team" required maxlength="255" value="${values.team ?? ''}"${describedBy(ids, invalid)}>`,
        })}
        <button type="submit" class="button primary">Create account</button>
      </form>
      <p class="aside">Already have an account? <a href="/login">Sign in</a>.</p>
    </section>`,
  });
}
