// Copy buttons: <button data-copy="ID"> copies the value of the field with that id, and
// says so twice: on the button, and in the page's live region (#live-status), so a
// screen reader announces "Copied". The fields themselves are selectable, so the page
// works without this script.

function announce(text: string): void {
  const live = document.getElementById('live-status');
  if (!live) return;
  // Emptied first, so the same words said twice are announced twice.
  live.textContent = '';
  setTimeout(() => (live.textContent = text), 50);
}

async function copy(button: HTMLButtonElement): Promise<void> {
  const target = document.getElementById(button.dataset['copy'] ?? '') as HTMLInputElement | HTMLTextAreaElement | null;
  if (!target) return;
  try {
    await navigator.clipboard.writeText(target.value);
  } catch {
    target.select();
    document.execCommand('copy');
  }
  const label = button.dataset['label'] ?? button.textContent ?? 'Copy';
  button.dataset['label'] = label;
  button.textContent = 'Copied';
  announce('Copied');
  setTimeout(() => (button.textContent = label), 1500);
}

document.addEventListener('click', (event) => {
  const button = (event.target as Element | null)?.closest<HTMLButtonElement>('button[data-copy]');
  if (button) void copy(button);
});
