// The API key dialog: asked once per tab, when the server first answers 401.

import { byId } from "./dom.js";

/** Ask for a key; resolves to the key, or null when the person cancels. */
export function askForKey(rejected) {
  const dialog = byId("key-dialog");
  const input = byId("key-input");
  byId("key-rejected").hidden = !rejected;
  input.value = "";
  return new Promise((resolve) => {
    const finish = (key) => {
      dialog.close();
      byId("key-form").onsubmit = null;
      byId("key-cancel").onclick = null;
      dialog.oncancel = null;
      resolve(key);
    };
    byId("key-form").onsubmit = (event) => {
      event.preventDefault();
      finish(input.value.trim() || null);
    };
    byId("key-cancel").onclick = () => finish(null);
    dialog.oncancel = (event) => {
      event.preventDefault();
      finish(null);
    };
    dialog.showModal();
    input.focus();
  });
}
