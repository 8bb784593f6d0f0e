// Copy buttons: <button data-copy="ID"> puts the text of the element with that id on the clipboard.
document.addEventListener("click", (event) => {
  const button = event.target.closest("button[data-copy]");
  const source = button && document.getElementById(button.dataset.copy);
  if (!source) {
    return;
  }
  const label = button.textContent;
  navigator.clipboard.writeText(source.innerText.trim()).then(
    () => {
      button.textContent = "Copied";
      setTimeout(() => { button.textContent = label; }, 1500);
    },
    () => {
      // Without clipboard access (an insecure origin), select the text for Ctrl-C instead.
      window.getSelection().selectAllChildren(source);
      button.textContent = "Selected: press Ctrl-C";
    },
  );
});
