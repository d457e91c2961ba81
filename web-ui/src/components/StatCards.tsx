export interface Stat {
  label: string;
  value: string;
}

export function StatCards({ stats }: { stats: readonly Stat[] }) {
  return (
    <dl className="cards">
      {stats.map((stat) => (
        <div className="card" key={stat.label}>
          <dt className="card-label">{stat.label}</dt>
          <dd className="card-value" style={{ margin: 0 }}>
            {stat.value}
          </dd>
        </div>
      ))}
    </dl>
  );
}
