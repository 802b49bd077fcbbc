// One-time links are selected when focused, ready to copy (an inline onfocus handler would be
// refused by the Content-Security-Policy).
for (const input of document.querySelectorAll("input[data-select-on-focus]")) {
  input.addEventListener("focus", () => input.select());
}
