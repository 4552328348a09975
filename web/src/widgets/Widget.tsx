// Picks the widget for a parameter type.

import { BooleanWidget } from './BooleanWidget';
import { CodeWidget } from './CodeWidget';
import { DictWidget } from './DictWidget';
import { JsonWidget } from './JsonWidget';
import { ListWidget } from './ListWidget';
import { NumberWidget } from './NumberWidget';
import { TextWidget } from './TextWidget';
import type { WidgetProps } from './types';

export function Widget(props: WidgetProps) {
  const { type } = props;
  if (type === 'number' || type === 'int' || type === 'float') return <NumberWidget {...props} />;
  if (type === 'boolean') return <BooleanWidget {...props} />;
  if (type === 'function') return <CodeWidget {...props} />;
  if (type === 'dict') return <DictWidget {...props} />;
  if (type.startsWith('list[')) return <ListWidget {...props} Item={Widget} />;
  if (type === 'string') return <TextWidget {...props} />;
  return <JsonWidget {...props} />;
}
