// The page: top bar, sidebar, canvas, inspector; and the app-wide hooks.

import { useEffect } from 'react';
import { ReactFlowProvider } from '@xyflow/react';
import { openInitialFile, rememberedFile, switchFile } from './actions/files';
import { Canvas } from './canvas/Canvas';
import { useAutosave } from './hooks/useAutosave';
import { useFileDrop } from './hooks/useFileDrop';
import { usePageTitle } from './hooks/usePageTitle';
import { useProblemSync } from './hooks/useProblemSync';
import { useServerEvents } from './hooks/useServerEvents';
import { useTheme } from './hooks/useTheme';
import { ConsolePanel } from './panels/ConsolePanel';
import { Dialog } from './panels/Dialog';
import { LibrarySaveDialog } from './panels/LibrarySaveDialog';
import { Gallery } from './panels/Gallery';
import { ShortcutsOverlay } from './panels/ShortcutsOverlay';
import { ImageViewer } from './panels/ImageViewer';
import { Inspector } from './panels/Inspector';
import { Notices } from './panels/Notices';
import { RunsPage } from './panels/RunsPage';
import { Sidebar } from './panels/Sidebar';
import { TemplatesDialog } from './panels/TemplateGallery';
import { TopBar } from './panels/TopBar';
import { useCatalog } from './store/catalog';
import { useEditor } from './store/editor';
import { useTakeRanWith } from './hooks/useTakeRanWith';
import { useFiles } from './store/files';
import { usePastRuns } from './store/pastRuns';
import { useUi } from './store/ui';

function useStartup(): void {
  useEffect(() => {
    void useCatalog.getState().load();
    void useFiles.getState().refresh().then(openInitialFile);
    const onHash = (): void => {
      const wanted = rememberedFile();
      if (wanted && wanted !== useEditor.getState().file?.path) void switchFile(wanted);
    };
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);
}

function usePanelClasses(): string {
  const panels = useUi((s) => s.panels);
  return [
    'gb-app',
    panels.side ? '' : 'gb-side-closed',
    panels.inspector ? '' : 'gb-inspector-closed',
    panels.console ? 'gb-console-open' : '',
  ]
    .filter(Boolean)
    .join(' ');
}

export function App() {
  useTheme();
  useStartup();
  useServerEvents();
  useProblemSync();
  useAutosave();
  useFileDrop();
  usePageTitle();
  useTakeRanWith();
  const classes = usePanelClasses();
  const panels = useUi((s) => s.panels);
  const pastRuns = usePastRuns((s) => s.open.length > 0);
  return (
    <ReactFlowProvider>
      <div className={classes}>
        <TopBar />
        {panels.side ? <Sidebar /> : null}
        <main className="gb-main">
          <Canvas />
          {pastRuns ? <RunsPage /> : null}
        </main>
        {panels.console ? <ConsolePanel /> : null}
        {panels.inspector ? <Inspector /> : null}
        <Notices />
        <TemplatesDialog />
        <Dialog />
        <LibrarySaveDialog />
        <ShortcutsOverlay />
        <Gallery />
        <ImageViewer />
      </div>
    </ReactFlowProvider>
  );
}
