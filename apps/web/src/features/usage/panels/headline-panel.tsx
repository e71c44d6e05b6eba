import { formatCount, formatTileChange } from '../format';
import { Panel } from '../panel';
import type { PanelPlacement, PanelProps } from '../panel-props';
import { TILES, type TileKey } from '../usage-api';
import { FIGURE_LABELS, type Figure } from '../view-state';

export const panel = { section: 'overview', order: 10 } satisfies PanelPlacement;

const isFigure = (key: TileKey): key is TileKey & Figure => Object.hasOwn(FIGURE_LABELS, key);

/**
 * The headline figures, each with its change against the previous period. A tile with a series is a
 * toggle choosing the large chart's figure (docs/decisions/0081-usage-dashboard-layout.md). The overview is
 * the page's own query: it shows the period line and the store-full banner from it too.
 */
export default function HeadlinePanel({ overview, view, setView }: PanelProps) {
  return (
    <Panel title="Headline figures" titleHidden level={3} query={overview} isEmpty={() => false}>
      {(data) => (
        <ul className="tiles">
          {TILES.map(([key, label]) => {
            const tile = data.tiles[key];
            const content = (
              <>
                <span className="tile-label">{label}</span>
                <span className="tile-value">{formatCount(tile.value)}</span>
                <span className="tile-change">
                  {formatTileChange(tile)}
                  <span className="visually-hidden"> against the previous period</span>
                </span>
              </>
            );
            return (
              <li key={key} className="tile" data-testid={`tile-${key}`}>
                {isFigure(key) ? (
                  // A toggle: pressed is the figure the large chart shows.
                  <button
                    type="button"
                    className="tile-button"
                    aria-pressed={view.figure === key}
                    onClick={() => setView({ figure: key })}
                  >
                    {content}
                  </button>
                ) : (
                  <div className="tile-button static">{content}</div>
                )}
              </li>
            );
          })}
        </ul>
      )}
    </Panel>
  );
}
