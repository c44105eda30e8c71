// Copy buttons: <button data-copy="ID"> copies the value of the field with that id.
// The fields themselves are selectable, so the page works without this script.

async function copy(button: HTMLButtonElement): Promise<void> {
  const target = document.getElementById(button.dataset['copy'] ?? '') as HTMLInputElement | HTMLTextAreaElement | null;
  if (!target) return;
  try {
    await navigator.clipboard.writeText(target.value);
  } catch {
    target.select();
    document.execCommand('copy');
  }
  const label = button.textContent;
  button.textContent = 'Copied';
  setTimeout(() => (button.textContent = label), 1500);
}

document.addEventListener('click', (event) => {
  const button = (event.target as Element | null)?.closest<HTMLButtonElement>('button[data-copy]');
  if (button) void copy(button);
});
