// Tabs for a program's files, in the widget and the playground: the WAI-ARIA tabs
// pattern (a tablist of tab buttons, each controlling its panel; only the chosen panel
// shows). One tab is in the Tab order at a time; Left/Right (and Home/End) move between
// tabs and show the tab reached.

let made = 0;

export class Tabs {
  private readonly tabs: HTMLButtonElement[] = [];
  private readonly panels: HTMLElement[] = [];
  private current = 0;

  constructor(
    readonly list: HTMLElement,
    private readonly onSelect: (index: number) => void = () => {},
  ) {
    list.setAttribute('role', 'tablist');
    list.addEventListener('keydown', (e) => {
      const at = this.tabs.indexOf(e.target as HTMLButtonElement);
      if (at < 0) return;
      const n = this.tabs.length;
      const to = e.key === 'ArrowRight' ? (at + 1) % n : e.key === 'ArrowLeft' ? (at - 1 + n) % n : e.key === 'Home' ? 0 : e.key === 'End' ? n - 1 : -1;
      if (to < 0) return;
      e.preventDefault();
      this.select(to, true);
    });
  }

  get selected(): number {
    return this.current;
  }

  get count(): number {
    return this.tabs.length;
  }

  /** A tab for `panel` (already in the page), at the end; returns its index. */
  add(label: string, panel: HTMLElement): number {
    const n = ++made;
    const tab = document.createElement('button');
    tab.type = 'button';
    tab.id = `tab-${n}`;
    tab.className = 'tab';
    tab.setAttribute('role', 'tab');
    panel.id ||= `tabpanel-${n}`;
    panel.setAttribute('role', 'tabpanel');
    panel.setAttribute('aria-labelledby', tab.id);
    tab.setAttribute('aria-controls', panel.id);
    tab.textContent = label;
    tab.addEventListener('click', () => this.select(this.tabs.indexOf(tab)));
    this.list.append(tab);
    this.tabs.push(tab);
    this.panels.push(panel);
    this.select(this.current < this.tabs.length ? this.current : 0);
    return this.tabs.length - 1;
  }

  /** Removes tab `index` and its panel from the page; the one before it is shown. */
  remove(index: number): void {
    const [tab] = this.tabs.splice(index, 1);
    const [panel] = this.panels.splice(index, 1);
    tab?.remove();
    panel?.remove();
    this.select(Math.max(0, Math.min(this.current >= index ? this.current - 1 : this.current, this.tabs.length - 1)));
  }

  setLabel(index: number, label: string): void {
    const tab = this.tabs[index];
    if (tab) tab.textContent = label;
  }

  select(index: number, focus = false): void {
    this.current = index;
    this.tabs.forEach((t, i) => {
      t.setAttribute('aria-selected', String(i === index));
      t.tabIndex = i === index ? 0 : -1;
      this.panels[i]!.hidden = i !== index;
    });
    if (focus) this.tabs[index]?.focus();
    this.onSelect(index);
  }
}
