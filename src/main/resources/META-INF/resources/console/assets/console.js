// Fulcrum console: progressive enhancement of server-rendered pages. Every form works without this file; it adds the
// confirmation dialogs, the event-dependent fields of the automation form, variable insertion and copying a new key.
(function () {
  'use strict';

  var FOCUSABLE = 'a[href], button:not([disabled]), input:not([type=hidden]):not([disabled]), select:not([disabled]), ' +
    'textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';

  function focusables(root) {
    return Array.prototype.filter.call(root.querySelectorAll(FOCUSABLE), function (el) {
      return el.offsetParent !== null || el === document.activeElement;
    });
  }

  function openDialog(dialog, opener) {
    dialog.returnFocusTo = opener;
    dialog.showModal();
    var first = dialog.querySelector('input:not([type=hidden])') || dialog.querySelector('[data-close]');
    if (first) {
      first.focus();
    }
  }

  function insertAtCaret(area, text) {
    var start = area.selectionStart, end = area.selectionEnd;
    area.value = area.value.slice(0, start) + text + area.value.slice(end);
    area.selectionStart = area.selectionEnd = start + text.length;
    area.focus();
  }

  document.addEventListener('click', function (event) {
    var target = event.target.closest('[data-open], [data-close], [data-insert], [data-starter], [data-copy]');
    if (!target) {
      return;
    }
    if (target.dataset.open) {
      openDialog(document.getElementById(target.dataset.open), target);
    } else if (target.hasAttribute('data-close')) {
      target.closest('dialog').close();
    } else if (target.dataset.insert) {
      insertAtCaret(document.getElementById(target.dataset.target), target.dataset.insert);
    } else if (target.dataset.starter) {
      var area = document.getElementById(target.dataset.target);
      area.value = target.dataset.starter;
      area.focus();
    } else if (target.dataset.copy) {
      var field = document.getElementById(target.dataset.copy);
      field.select();
      if (navigator.clipboard) {
        navigator.clipboard.writeText(field.value).then(function () { target.textContent = 'Copied'; });
      }
    }
  });

  // a modal dialog keeps the focus: Tab and Shift+Tab cycle through its controls; Escape closes it (the browser's own)
  document.addEventListener('keydown', function (event) {
    var dialog = document.querySelector('dialog[open]');
    if (!dialog || event.key !== 'Tab') {
      return;
    }
    var items = focusables(dialog);
    if (items.length === 0) {
      return;
    }
    var index = items.indexOf(document.activeElement);
    var next = event.shiftKey ? (index <= 0 ? items.length - 1 : index - 1) : (index + 1) % items.length;
    items[next].focus();
    event.preventDefault();
  });

  document.querySelectorAll('dialog').forEach(function (dialog) {
    dialog.addEventListener('close', function () {
      var form = dialog.querySelector('form');
      if (form) {
        form.reset();
        syncConfirm(form);
      }
      if (dialog.returnFocusTo) {
        dialog.returnFocusTo.focus();
      }
    });
  });

  // typed confirmation: the submit button is enabled once the name is typed exactly (the API checks it again)
  function syncConfirm(form) {
    var input = form.querySelector('[data-must-equal]');
    if (input) {
      form.querySelector('button[type=submit]').disabled = input.value !== input.dataset.mustEqual;
    }
  }

  document.addEventListener('input', function (event) {
    if (event.target.matches('[data-must-equal]')) {
      syncConfirm(event.target.form);
    }
  });

  // the automation form shows the fields of the chosen event only (hidden fields are not sent)
  var eventField = document.getElementById('a-event');
  var eventValue = document.getElementById('a-event-value');
  function showEventFields() {
    var chosen = eventValue ? eventValue.value : eventField.value;
    document.querySelectorAll('[data-events]').forEach(function (el) {
      var on = el.dataset.events.split(' ').indexOf(chosen) >= 0;
      el.hidden = !on;
      if (el.tagName === 'FIELDSET') {
        el.disabled = !on;
      }
    });
  }
  if (eventField) {
    eventField.addEventListener('change', showEventFields);
    showEventFields();
  }

  // and the fields of the chosen action (a DoNothing automation names no webhook and has no payload)
  var actionField = document.getElementById('a-action');
  function showActionFields() {
    document.querySelectorAll('[data-actions]').forEach(function (el) {
      var on = el.dataset.actions.split(' ').indexOf(actionField.value) >= 0;
      el.hidden = !on;
      el.disabled = !on;
    });
  }
  if (actionField) {
    actionField.addEventListener('change', showActionFields);
    showActionFields();
  }
})();
