// The API key dialog: asked once per tab, when the server first answers 401. Every page
// shares it, so it is built here rather than written into each page's HTML.

import { parts } from "./dom.js";

const DIALOG = `
  <form id="key-form" data-part="form">
    <h2>API key</h2>
    <p>This server needs an API key. It is kept in this tab only and sent as
      <code>Authorization: Bearer</code>.</p>
    <p id="key-rejected" data-part="rejected" class="error" hidden>That key was not accepted.</p>
    <input id="key-input" data-part="input" type="password" autocomplete="off" aria-label="API key">
    <div class="buttons">
      <button id="key-cancel" data-part="cancel" type="button">Cancel</button>
      <button type="submit">Use key</button>
    </div>
  </form>`;

/** The page's key dialog, added to it the first time a key is needed. */
function keyDialog() {
  let dialog = document.getElementById("key-dialog");
  if (dialog === null) {
    dialog = document.createElement("dialog");
    dialog.id = "key-dialog";
    dialog.innerHTML = DIALOG;
    document.body.append(dialog);
  }
  return dialog;
}

/** Ask for a key; resolves to the key, or null when the person cancels. */
export function askForKey(rejected) {
  const dialog = keyDialog();
  const { form, input, cancel } = parts(dialog);
  parts(dialog).rejected.hidden = !rejected;
  input.value = "";
  return new Promise((resolve) => {
    const finish = (key) => {
      dialog.close();
      form.onsubmit = null;
      cancel.onclick = null;
      dialog.oncancel = null;
      resolve(key);
    };
    form.onsubmit = (event) => {
      event.preventDefault();
      finish(input.value.trim() || null);
    };
    cancel.onclick = () => finish(null);
    dialog.oncancel = (event) => {
      event.preventDefault();
      finish(null);
    };
    dialog.showModal();
    input.focus();
  });
}
