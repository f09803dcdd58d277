// Progressive enhancement for the console: every page works without this file.
'use strict';

function announce(near, text) {
  var scope = near.closest('.card, .field, section, form') || document;
  var status = scope.querySelector('.copy-status');
  if (status) status.textContent = text;
}

// Copy buttons: data-copy names the input whose value is copied.
document.querySelectorAll('[data-copy]').forEach(function (button) {
  var target = document.getElementById(button.getAttribute('data-copy'));
  if (!target) return;
  button.hidden = false;
  button.addEventListener('click', function () {
    var value = target.value;
    if (!value) {
      announce(button, 'Nothing to copy yet.');
      return;
    }
    var done = function () {
      announce(button, 'Copied to the clipboard.');
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(value).then(done, function () {
        target.select();
        announce(button, 'Press Ctrl+C (or ⌘C) to copy.');
      });
    } else {
      target.select();
      announce(button, 'Press Ctrl+C (or ⌘C) to copy.');
    }
  });
});

// Generate buttons fill a secret field with 32 random bytes, hex encoded.
document.querySelectorAll('[data-generate-secret]').forEach(function (button) {
  var target = document.getElementById(button.getAttribute('data-generate-secret'));
  if (!target || !window.crypto || !window.crypto.getRandomValues) return;
  button.hidden = false;
  button.addEventListener('click', function () {
    var bytes = new Uint8Array(32);
    window.crypto.getRandomValues(bytes);
    target.value = Array.prototype.map
      .call(bytes, function (byte) {
        return byte.toString(16).padStart(2, '0');
      })
      .join('');
    target.focus();
    target.select();
    announce(button, 'A new secret was generated. Copy it now: it will not be shown again after saving.');
  });
});

// Destructive forms ask first; confirmed=yes skips the server's own confirmation page.
document.querySelectorAll('form[data-confirm]').forEach(function (form) {
  form.addEventListener('submit', function (event) {
    if (!window.confirm(form.getAttribute('data-confirm'))) {
      event.preventDefault();
      return;
    }
    if (!form.querySelector('input[name="confirmed"]')) {
      var confirmed = document.createElement('input');
      confirmed.type = 'hidden';
      confirmed.name = 'confirmed';
      confirmed.value = 'yes';
      form.appendChild(confirmed);
    }
  });
});

// Close the team switcher with Escape, returning focus to it.
document.querySelectorAll('details.team-switcher').forEach(function (details) {
  details.addEventListener('keydown', function (event) {
    if (event.key === 'Escape' && details.open) {
      details.open = false;
      details.querySelector('summary').focus();
    }
  });
});
