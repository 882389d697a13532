export interface Bar {
  label: string
  value: number
  /** Shown above the bar (defaults to the value). */
  caption?: string
}

/**
 * A plain SVG bar chart: the dashboard's few series need no chart library (and none downloads
 * from a CDN). Scales to its container's width.
 */
export default function BarChart({ bars, height = 200, color = '#1677ff', testId, empty }: { bars: Bar[]; height?: number; color?: string; testId?: string; empty?: string }) {
  const width = 640
  const top = 26
  const bottom = 30
  // Fonts are in the chart's units: on a phone the chart is half as wide, so they start large,
  // and a long series labels every other bar.
  const font = 16
  const every = bars.length > 8 ? 2 : 1
  const max = Math.max(1, ...bars.map((b) => b.value))
  const slot = width / Math.max(1, bars.length)
  const barWidth = Math.max(4, slot * 0.6)
  const plot = height - top - bottom
  return (
    <svg viewBox={`0 0 ${width} ${height}`} className="bar-chart" role="img" data-testid={testId}>
      <line x1={0} x2={width} y1={top + plot} y2={top + plot} stroke="#d9d9d9" />
      {empty && bars.every((b) => b.value === 0) && (
        <text x={width / 2} y={top + plot / 2} textAnchor="middle" fontSize={font} fill="#bfbfbf">
          {empty}
        </text>
      )}
      {bars.map((b, i) => {
        const h = b.value === 0 ? 0 : Math.max(2, (b.value / max) * plot)
        const x = i * slot + (slot - barWidth) / 2
        return (
          <g key={`${b.label}-${i}`}>
            <rect x={x} y={top + plot - h} width={barWidth} height={h} fill={color} rx={2}>
              <title>{`${b.label}：${b.caption ?? b.value}`}</title>
            </rect>
            {b.value > 0 && (
              <text x={x + barWidth / 2} y={top + plot - h - 6} textAnchor="middle" fontSize={font - 3} fill="#595959">
                {b.caption ?? b.value}
              </text>
            )}
            {(bars.length - 1 - i) % every === 0 && (
              <text x={x + barWidth / 2} y={height - 8} textAnchor="middle" fontSize={font} fill="#8c8c8c">
                {b.label}
              </text>
            )}
          </g>
        )
      })}
    </svg>
  )
}
