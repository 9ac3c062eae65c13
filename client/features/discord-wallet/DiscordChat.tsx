import { Hash } from "lucide-react";
import botAvatar from "../../../content/images/products/discord-bot.svg";
import type { ChatMessage } from "../../../content/site/types";

const USER_COLOURS = ["bg-emerald-600", "bg-rose-600", "bg-amber-600", "bg-violet-600"];

/** A mock Discord channel: members type slash commands, the bot answers. */
export function DiscordChat({ channel, messages, label }: { channel: string; messages: ChatMessage[]; label: string }) {
  const people = [...new Set(messages.filter((m) => !m.bot).map((m) => m.author))];
  return (
    <figure className="overflow-hidden rounded-2xl bg-[#313338] text-left text-slate-100 shadow-xl ring-1 ring-black/10">
      <figcaption className="flex items-center gap-2 border-b border-black/30 bg-[#2b2d31] px-4 py-3 text-sm font-semibold text-white">
        <Hash className="h-5 w-5 text-slate-400" aria-hidden="true" />
        {channel}
        <span className="sr-only"> — {label}</span>
      </figcaption>
      <ol className="space-y-5 px-4 py-5">
        {messages.map((m, i) => (
          <li key={i} className="flex gap-3">
            {m.bot ? (
              <img src={botAvatar} alt="" width={40} height={40} loading="lazy" className="h-10 w-10 flex-none rounded-full" />
            ) : (
              <span
                aria-hidden="true"
                className={`flex h-10 w-10 flex-none items-center justify-center rounded-full text-sm font-bold uppercase text-white ${
                  USER_COLOURS[people.indexOf(m.author) % USER_COLOURS.length]
                }`}
              >
                {m.author.slice(0, 1)}
              </span>
            )}
            <div className="min-w-0 flex-1">
              <p className="flex items-center gap-2 text-sm">
                <span className="font-semibold text-white">{m.author}</span>
                {m.bot && (
                  <span className="rounded bg-[#5865f2] px-1.5 py-0.5 text-[10px] font-bold uppercase leading-none text-white">Bot</span>
                )}
              </p>
              {m.command && (
                <p className="mt-1">
                  <code className="rounded bg-[#1e1f22] px-2 py-1 font-mono text-sm text-sky-300">{m.command}</code>
                </p>
              )}
              {m.text && <p className="mt-1 text-sm text-slate-200">{m.text}</p>}
              {m.card && (
                <div className="mt-2 max-w-sm rounded border-l-4 border-emerald-500 bg-[#2b2d31] px-4 py-3">
                  <p className="text-sm font-semibold text-white">{m.card.title}</p>
                  {m.card.lines.map((line) => (
                    <p key={line} className="mt-1 text-sm text-slate-300">{line}</p>
                  ))}
                </div>
              )}
            </div>
          </li>
        ))}
      </ol>
    </figure>
  );
}
