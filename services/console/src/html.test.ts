import { escapeHtml, html, SafeHtml } from './html';

describe('html', () => {
  it('escapes every interpolated string, so text can never become markup', () => {
    const name = '<script>alert("x")</script> & \'friends\'';
    expect(html`<p>${name}</p>`.value).toBe('<p>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;friends&#39;</p>');
  });

  it('keeps nested html and arrays of html as markup', () => {
    const items = ['a<b', 'c'].map((item) => html`<li>${item}</li>`);
    expect(html`<ul>${items}</ul>`.value).toBe('<ul><li>a&lt;b</li><li>c</li></ul>');
  });

  it('renders null, undefined and false as nothing, numbers as text', () => {
    expect(html`[${null}${undefined}${false}${0}${42}]`.value).toBe('[042]');
  });

  it('escapes attribute values', () => {
    expect(html`<input value="${'" onfocus="x'}">`.value).toBe('<input value="&quot; onfocus=&quot;x">');
    expect(escapeHtml('"\'')).toBe('&quot;&#39;');
    expect(html`${new SafeHtml('<b>ok</b>')}`.value).toBe('<b>ok</b>');
  });
});
