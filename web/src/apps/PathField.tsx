// A file, folder or image input: its path as text, Browse (the server's folders only) and, for
// files and images, Upload (kept in the server's media folder; too large or the wrong type is
// refused beside the field, before or by the server).

import { useRef, useState } from 'react';
import { uploadFile } from '../api/apps';
import { ApiError } from '../api/http';
import type { FieldProps } from './values';
import { PathPicker } from './PathPicker';

type Props = FieldProps & { id: string };

export function PathField(props: Props) {
  const { id, prop, value, onChange, workflow, onError, disabled } = props;
  const [picking, setPicking] = useState(false);
  const kind = prop.format ?? 'file';
  return (
    <div className="gb-appfield-path">
      <input
        id={id}
        className="gb-input gb-mono"
        value={String(value ?? '')}
        disabled={disabled}
        onChange={(e) => onChange(e.target.value)}
      />
      <button className="gb-button" disabled={disabled} onClick={() => setPicking(true)}>
        Browse…
      </button>
      {kind !== 'folder' && workflow ? <UploadButton {...props} workflow={workflow} /> : null}
      {picking ? (
        <PathPicker
          kind={kind}
          accept={prop['x-accept'] ?? []}
          onPick={(path) => {
            setPicking(false);
            onChange(path);
            onError(null);
          }}
          onClose={() => setPicking(false)}
        />
      ) : null}
    </div>
  );
}

function UploadButton({ name, prop, onChange, workflow, maxUpload, onError, disabled }: Props & { workflow: string }) {
  const [uploading, setUploading] = useState(false);
  const file = useRef<HTMLInputElement>(null);
  const accept = prop['x-accept'] ?? (prop.format === 'image' ? ['image/*'] : []);
  const upload = async (chosen: File): Promise<void> => {
    if (chosen.size > maxUpload) {
      onError(`${chosen.name} is ${sizeText(chosen.size)}; an upload may have ${sizeText(maxUpload)} at most`);
      return;
    }
    setUploading(true);
    try {
      onChange((await uploadFile(workflow, name, chosen)).path);
      onError(null);
    } catch (error) {
      onError(error instanceof ApiError ? (error.fields[name] ?? error.message) : String(error));
    } finally {
      setUploading(false);
    }
  };
  return (
    <>
      <button className="gb-button" disabled={disabled || uploading} onClick={() => file.current?.click()}>
        {uploading ? 'Uploading…' : 'Upload…'}
      </button>
      <input
        ref={file}
        type="file"
        hidden
        aria-label={`upload a file for ${name}`}
        accept={accept.join(',')}
        onChange={(e) => {
          const chosen = e.target.files?.[0];
          e.target.value = '';
          if (chosen) void upload(chosen);
        }}
      />
    </>
  );
}

export function sizeText(bytes: number): string {
  if (bytes >= 1 << 20) return `${(bytes / (1 << 20)).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes} bytes`;
}
