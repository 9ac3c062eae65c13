-- A fresh embedded database starts with a sample team, so a new user sees the
-- /about grid. Replace it with `citizen-site team import FILE`.
INSERT INTO team_members (name, role, bio, linkedin, x_profile, image_url) VALUES
  ('Amina Diallo', 'Community Lead', 'Helps new communities design their currency and run their first launch.', '', '', '🌍'),
  ('Jonas Verbeke', 'Engineering', 'Builds the wallet apps and the card infrastructure behind them.', '', '', '🛠️'),
  ('Lea Martens', 'Partnerships', 'Works with cities, festivals and cooperatives that want a currency of their own.', '', '', '🤝'),
  ('Tomas Reyes', 'Design', 'Makes sending a community token feel as simple as handing over a coin.', '', '', '');
