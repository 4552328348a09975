// Small line icons drawn in SVG, so they look the same whatever fonts the machine has.

const PATHS = {
  play: 'M5 3.5v9l7.5-4.5z',
  step: 'M4 3.5v9l6.5-4.5zM11.5 3.5v9',
  pause: 'M5.5 3.5v9M10.5 3.5v9',
  resume: 'M5 3.5v9l7.5-4.5z',
  stop: 'M4.5 4.5h7v7h-7z',
  undo: 'M6 4L3 7l3 3M3 7h6.5a3.5 3.5 0 010 7H7',
  redo: 'M10 4l3 3-3 3M13 7H6.5a3.5 3.5 0 000 7H9',
  sun: 'M8 5.2a2.8 2.8 0 100 5.6 2.8 2.8 0 000-5.6zM8 1.5v1.6M8 12.9v1.6M1.5 8h1.6M12.9 8h1.6M3.4 3.4l1.1 1.1M11.5 11.5l1.1 1.1M3.4 12.6l1.1-1.1M11.5 4.5l1.1-1.1',
  moon: 'M13 9.5A5.5 5.5 0 016.5 3a5.5 5.5 0 106.5 6.5z',
  trash: 'M3.5 4.5h9M6.5 4.5V3h3v1.5M4.5 4.5l.7 8.5h5.6l.7-8.5',
  pencil: 'M10.5 3l2.5 2.5L6 12.5H3.5V10z',
  plus: 'M8 3.5v9M3.5 8h9',
  close: 'M4.5 4.5l7 7M11.5 4.5l-7 7',
  help: 'M6 6.2a2 2 0 113 1.7c-.6.4-1 .8-1 1.6M8 11.6v.4',
  runTo: 'M3.5 4v8l5-4zM9.5 4v8l5-4z',
  inject: 'M12.5 8a4.5 4.5 0 11-1.4-3.3M12.8 2.5v2.6h-2.6',
  panelLeft: 'M2.5 3.5h11v9h-11zM6 3.5v9',
  panelRight: 'M2.5 3.5h11v9h-11zM10 3.5v9',
  panelBottom: 'M2.5 3.5h11v9h-11zM2.5 9.5h11',
  chevronDown: 'M4.5 6.5L8 10l3.5-3.5',
} as const;

export type IconName = keyof typeof PATHS;

export function Icon({ name, size = 14 }: { name: IconName; size?: number }) {
  const filled = name === 'play' || name === 'resume' || name === 'stop' || name === 'runTo';
  return (
    <svg
      className="gb-svg"
      width={size}
      height={size}
      viewBox="0 0 16 16"
      aria-hidden="true"
      fill={filled ? 'currentColor' : 'none'}
      stroke="currentColor"
      strokeWidth={filled ? 1 : 1.5}
      strokeLinecap="round"
      strokeLinejoin="round"
    >
      <path d={PATHS[name]} />
    </svg>
  );
}
