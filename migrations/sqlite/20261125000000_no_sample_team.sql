-- Production never publishes invented people: the sample team an earlier
-- migration put in every fresh embedded database goes. Only rows that are
-- exactly the sample are removed; a team an operator imported stays.
-- `dev` (or `serve --sample-team`) fills an empty table with the sample
-- from server/db/sample-team.json instead.
DELETE FROM team_members WHERE
  (name = 'Amina Diallo' AND role = 'Community Lead' AND bio = 'Helps new communities design their currency and run their first launch.' AND image_url = '🌍')
  OR (name = 'Jonas Verbeke' AND role = 'Engineering' AND bio = 'Builds the wallet apps and the card infrastructure behind them.' AND image_url = '🛠️')
  OR (name = 'Lea Martens' AND role = 'Partnerships' AND bio = 'Works with cities, festivals and cooperatives that want a currency of their own.' AND image_url = '🤝')
  OR (name = 'Tomas Reyes' AND role = 'Design' AND bio = 'Makes sending a community token feel as simple as handing over a coin.' AND image_url = '');
